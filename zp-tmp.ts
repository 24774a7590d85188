import { PDFDocument, rgb } from 'pdf-lib';
import { convertFax } from './src/platform/content/converters.js';
const d = await PDFDocument.create();
for (let i = 0; i < 3; i++) { const p = d.addPage([595.28, 841.89]); p.drawRectangle({x:0,y:0,width:595.28,height:841.89,color:rgb(0.5,0.5,0.5)}); }
const bytes = await d.save();
console.log('pdf', bytes.length);
let size = 0;
const t = Date.now();
const r = await convertFax(bytes, { orientation: 'portrait', mode: 'photo' }, (f, data) => { size += data.length; });
console.log(r, size, Date.now() - t);
