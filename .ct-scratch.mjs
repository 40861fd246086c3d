import Table from 'cli-table3';
const rows=[];for(let i=0;i<50000;i++)rows.push([String(1000000+i),'yes','Biscuits sablés à la châtaigne bio','Carton de 12','unité × 12','GEN-000123','TVA 20 %, Droits d\'accise 3,2 %']);
const t0=performance.now();
const t=new Table({head:['ID','ACTIVE','LABEL','PACKAGING','UNIT','PRODUCT','TAXES'],colWidths:[9,8,30,16,14,12,30],wordWrap:false,truncate:'…',style:{head:[],border:[]}});
for(const r of rows)t.push(r);
const s=t.toString();
console.log(performance.now()-t0, s.length, process.memoryUsage().rss/1e6);
